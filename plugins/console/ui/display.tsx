/** How values read on the page: times, tenants, statuses, empty tables. */
import type { ComponentChildren } from 'preact';

export function time(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** A tenant hash, shortened; the whole hash on hover and when copied. */
export function Tenant({ hash }: { hash: string }) {
  return (
    <code class="tenant" title={hash}>
      {hash.slice(0, 12)}…
    </code>
  );
}

export function Status({ value }: { value: string }) {
  return <span class={`status status-${value}`}>{value}</span>;
}

export function Problem({ message }: { message: string | undefined }) {
  return message ? (
    <p class="problem" role="alert">
      {message}
    </p>
  ) : null;
}

/** A table, or what to say when it has no row; `numbers` are the columns of figures (right-aligned). */
export function Table({
  head,
  numbers = [],
  empty,
  children,
}: {
  head: string[];
  numbers?: number[];
  empty: string;
  children: ComponentChildren[];
}) {
  if (children.length === 0) return <p class="empty">{empty}</p>;
  return (
    <table>
      <thead>
        <tr>
          {head.map((title, column) => (
            <th class={numbers.includes(column) ? 'number' : undefined}>{title}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}

export function Choice<V extends string>({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: V;
  options: readonly V[];
  onChange: (value: V) => void;
}) {
  return (
    <label class="choice">
      {label}{' '}
      <select value={value} onChange={(event) => onChange((event.target as HTMLSelectElement).value as V)}>
        {options.map((option) => (
          <option value={option}>{option || 'all'}</option>
        ))}
      </select>
    </label>
  );
}

/** Pages go forward with the cursor the API gave; "first page" starts over. */
export function Pager({
  next,
  cursor,
  onPage,
}: {
  next: string | null | undefined;
  cursor: string | undefined;
  onPage: (cursor: string | undefined) => void;
}) {
  if (!next && !cursor) return null;
  return (
    <p class="pager">
      {cursor ? (
        <button type="button" onClick={() => onPage(undefined)}>
          First page
        </button>
      ) : null}
      {next ? (
        <button type="button" onClick={() => onPage(next)}>
          Next page
        </button>
      ) : null}
    </p>
  );
}
