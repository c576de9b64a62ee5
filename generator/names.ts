/** Names derived from spec ids: `demand-report` → `DemandReport` (types) / `demandReport` (values). */
export const pascal = (id: string) => id.replace(/(^|-)([a-z0-9])/g, (_m, _d, c: string) => c.toUpperCase());
export const camel = (id: string) => pascal(id).replace(/^[A-Z]/, (c) => c.toLowerCase());
/** Back to a spec id: `billingEvent` → `billing-event` (operationIds name pages and rule targets). */
export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
