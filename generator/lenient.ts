/**
 * Lenient policies of the spec: `lenient` on a rule of spec/errors.yaml and `x-lenient` on a
 * schema field. Both are checked against the runtime's vocabulary (runtime/lenient.ts, where each
 * treatment, part and normaliser is implemented) and described for the documentation site.
 */
import { lenientVocabulary, policyOf, type LenientPolicy } from "@adxkit/bindings/runtime";

/** A policy as the model keeps it: the runtime's fields and the reason the spec gives for the choice. */
export interface LenientPolicyModel extends LenientPolicy {
  why?: string;
}

/** Reads and checks a policy as written in the spec; problems name `where`. */
export function lenientPolicy(raw: unknown, where: string, problems: string[]): LenientPolicyModel | undefined {
  if (raw === undefined) return undefined;
  const policy = policyOf(raw) as LenientPolicyModel | undefined;
  if (policy === undefined) {
    problems.push(`${where}: a lenient policy is a treatment or an object with one`);
    return undefined;
  }
  const { treatments, parts, normalisers, otherwise } = lenientVocabulary;
  const known = (value: unknown, list: readonly string[]) => typeof value === "string" && list.includes(value);
  if (!known(policy.treatment, treatments)) problems.push(`${where}: treatment ${JSON.stringify(policy.treatment)} is not one of ${treatments.join(", ")}`);
  if (policy.part !== undefined && (!known(policy.part, parts) || policy.treatment !== "drop")) problems.push(`${where}: part ${JSON.stringify(policy.part)} needs treatment drop and one of ${parts.join(", ")}`);
  if (policy.treatment === "normalise" && (policy.normalise ?? []).length === 0) problems.push(`${where}: treatment normalise names no normaliser`);
  for (const name of policy.normalise ?? []) if (!known(name, normalisers) || policy.treatment !== "normalise") problems.push(`${where}: normaliser ${JSON.stringify(name)} needs treatment normalise and one of ${normalisers.join(", ")}`);
  if (policy.otherwise !== undefined && !known(policy.otherwise, otherwise)) problems.push(`${where}: otherwise ${JSON.stringify(policy.otherwise)} is not one of ${otherwise.join(", ")}`);
  for (const key of Object.keys(policy)) if (!["treatment", "part", "normalise", "otherwise", "why"].includes(key)) problems.push(`${where}: unknown key ${key} in a lenient policy`);
  return policy;
}

const partText: Record<string, string> = {
  value: "the value",
  imp: "the imp",
  media: "the imp's media object (when the imp offers another ad type)",
  bid: "the bid",
  seatbid: "the seatbid",
};

/** The policy in a few words for the docs: "drops the imp", "normalises (code), else drops the value". */
export function describeLenient(policy: LenientPolicyModel | undefined, severity: "error" | "warning"): string {
  if (policy === undefined) return severity === "warning" ? "warning" : "error";
  let text: string;
  if (policy.treatment === "drop") text = `warning; drops ${partText[policy.part ?? "value"]}`;
  else if (policy.treatment === "normalise") text = `warning; normalises the value (${(policy.normalise ?? []).join(", then ")})`;
  else text = policy.treatment === "warn" ? "warning" : "error";
  if (policy.otherwise !== undefined) text += `; otherwise ${policy.otherwise === "drop" ? "drops the value" : policy.otherwise === "warn" ? "a warning" : "an error"}`;
  else if (policy.treatment === "drop" || policy.treatment === "normalise") text += "; otherwise an error";
  return text;
}
