/** The largest number of events (upstream call arrivals) inside any rolling window of `windowMs`. */
export function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}
