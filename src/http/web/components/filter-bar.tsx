/** One field of a filter bar: a free-text input, a choice, or a time. */
export type FilterField =
  | { readonly kind: 'text'; readonly name: string; readonly label: string; readonly placeholder?: string }
  | {
      readonly kind: 'select';
      readonly name: string;
      readonly label: string;
      readonly options: readonly (readonly [value: string, label: string])[];
    }
  | { readonly kind: 'time'; readonly name: string; readonly label: string };

/** Props of a filter bar: the fields, the current values (from the URL) and where it submits. */
export interface FilterBarProps {
  readonly action: string;
  readonly fields: readonly FilterField[];
  readonly values: Readonly<Record<string, string | undefined>>;
  /** Parameters kept as they are (the sort), as hidden fields. */
  readonly keep?: Readonly<Record<string, string | undefined>>;
}

/** A GET form of filters: submitting it gives the filtered list its own URL. */
export function FilterBar(props: FilterBarProps) {
  return (
    <form class="filters" method="get" action={props.action} role="search">
      {props.fields.map((f) => (
        <label>
          <span>{f.label}</span>
          {f.kind === 'select' ? (
            <select name={f.name}>
              <option value="">any</option>
              {f.options.map(([value, label]) => (
                <option value={value} selected={props.values[f.name] === value}>
                  {label}
                </option>
              ))}
            </select>
          ) : (
            <input
              type={f.kind === 'time' ? 'text' : 'search'}
              name={f.name}
              value={props.values[f.name] ?? ''}
              placeholder={f.kind === 'time' ? 'e.g. 2026-11-23T00:00:00Z' : (f.placeholder ?? '')}
              maxlength={256}
            />
          )}
        </label>
      ))}
      {Object.entries(props.keep ?? {}).map(([k, v]) => (v ? <input type="hidden" name={k} value={v} /> : null))}
      <button type="submit">Apply</button>
      <a class="reset" href={props.action}>
        Reset
      </a>
    </form>
  );
}
