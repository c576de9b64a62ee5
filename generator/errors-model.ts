/**
 * errors.yaml in the model: the report statuses, the validation rules (keyword kinds and named
 * rules, each with its severity, lenient policy and statuses) and the auction rejections.
 */
import { lenientPolicy, type LenientPolicyModel } from "./lenient.js";

export interface ReportStatusModel {
  code: number;
  msg: string;
  name: string;
  appliesTo: string[];
  description: string;
}

export interface NamedRuleModel {
  id: string;
  description: string;
  /** The severity in strict mode (and in lenient mode when the rule declares no policy). */
  severity: "error" | "warning";
  /** The rule's treatment in lenient mode (errors.yaml `lenient`). */
  lenient?: LenientPolicyModel;
  appliesTo: string[];
  /** The message of the keyword failure this rule names (x-rule): `{field}`, `{value}`. */
  message?: string;
  /** The HTTP status its operations answer it with (rule-statuses.ts checks they declare it). */
  httpStatus?: number;
  /** The report status code a report request breaking it gets. */
  reportStatus?: number;
}

export interface ErrorsModel {
  reportStatus: ReportStatusModel[];
  precedence: number[];
  validationRules: { id: string; description: string; keywords: string[]; severity: "error" | "warning"; lenient?: LenientPolicyModel }[];
  namedRules: NamedRuleModel[];
  /** Each rule's lenient treatment, by rule id (kinds and named rules that declare one). */
  lenientPolicies: Record<string, LenientPolicyModel>;
  /** `rules`: the validation rules whose errors on a bid the exchange counts under this reason. */
  auctionRejections: { id: string; description: string; rules: string[] }[];
}

/** Reads errors.yaml (already checked against spec/meta/errors.schema.yaml); pushes what its schema cannot say. */
export function buildErrors(data: any, problems: string[]): ErrorsModel {
  const reportStatus = (data?.["report-status"] ?? []).map((s: any) => ({
    code: s.code,
    msg: s.msg,
    name: s.name,
    appliesTo: s["applies-to"] ?? [],
    description: s.description ?? "",
  }));
  if (reportStatus.length === 0) problems.push("errors.yaml: report-status is empty");
  // validation-rules holds both the keyword kinds (with `keywords`) and the named rules (with `severity`).
  const rules: any[] = data?.["validation-rules"] ?? [];
  const lenientOf = (r: any) => {
    const policy = lenientPolicy(r.lenient, `errors.yaml: validation-rules ${r.id} lenient`, problems);
    return policy !== undefined ? { lenient: policy } : {};
  };
  const namedRules: NamedRuleModel[] = rules
    .filter((r) => !Array.isArray(r.keywords))
    .map((r) => ({
      id: r.id,
      description: r.description ?? "",
      severity: r.severity === "warning" ? "warning" : "error",
      ...lenientOf(r),
      appliesTo: r["applies-to"] ?? [],
      ...(typeof r.message === "string" ? { message: r.message } : {}),
      ...(Number.isInteger(r["http-status"]) ? { httpStatus: r["http-status"] } : {}),
      ...(Number.isInteger(r["report-status"]) ? { reportStatus: r["report-status"] } : {}),
    }));
  const validationRules = rules
    .filter((r) => Array.isArray(r.keywords))
    .map((k) => ({ id: k.id, description: k.description ?? "", keywords: k.keywords, severity: k.severity === "warning" ? ("warning" as const) : ("error" as const), ...lenientOf(k) }));
  return {
    reportStatus,
    precedence: data?.["report-status-precedence"] ?? [],
    validationRules,
    namedRules,
    lenientPolicies: Object.fromEntries([...validationRules, ...namedRules].filter((r) => r.lenient !== undefined).map((r) => [r.id, r.lenient!])),
    auctionRejections: (data?.["auction-rejections"] ?? []).map((r: any) => ({ id: r.id, description: r.description ?? "", rules: r.rules ?? [] })),
  };
}
