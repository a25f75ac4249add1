/**
 * A section's data: fetched when the section opens or its query changes, again every few seconds
 * while it is shown (the console is read-mostly: what it shows follows the service), and on demand.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { callAdmin, KeyRefused } from './operator-api.js';

const REFRESH_MS = 5000;

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/** `refreshMs`: how often it is read again while shown (the history changes once a minute). */
export function usePolled<T>(path: string, onKeyRefused: (message: string) => void, refreshMs = REFRESH_MS): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let current = true;
    callAdmin<T>(path).then(
      (body) => {
        if (!current) return;
        setData(body);
        setError(undefined);
      },
      (err: Error) => {
        if (!current) return;
        if (err instanceof KeyRefused) onKeyRefused(err.message);
        else setError(err.message);
      },
    );
    const timer = setTimeout(reload, refreshMs);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [path, tick]);

  return { data, error, reload };
}
