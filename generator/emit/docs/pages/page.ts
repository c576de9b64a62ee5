/** A page of the site before it is put in the layout. */
export interface Page {
  /** Path inside the site, e.g. `objects/video.html`. */
  path: string;
  title: string;
  /** The navigation entry marked current (a page path). */
  nav: string;
  /** Class of <main>: `wide` for the two-pane operation pages. */
  mainClass?: string;
  crumbs: { label: string; path: string }[];
  bodyHtml: string;
}
