/** What the kit found wrong: which part of the adapter, where exactly, and what to change. */
export interface Finding {
  /** `profile`, `auth`, `transforms`, `fixtures`, `answers`, `errors`, `requests`. */
  area: string;
  /** The route, fixture file or profile key concerned. */
  where: string;
  /** What is wrong and what to change. */
  message: string;
}

export function describeFinding(finding: Finding): string {
  return `${finding.where}: ${finding.message}`;
}
