/** Names derived from spec ids: `demand-report` → `DemandReport` (types) / `demandReport` (values). */
export const pascal = (id: string) => id.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
export const camel = (id: string) => pascal(id).replace(/^[A-Z]/, (c) => c.toLowerCase());
