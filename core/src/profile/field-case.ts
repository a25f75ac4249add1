/**
 * Field-name styles of upstream APIs: the service speaks the SPEC's camelCase, some OPCO APIs
 * speak snake_case. One deterministic rule each way, plus a table of irregular names, so a
 * profile says "snake_case upstream" as data (`renameKeys` in transforms.ts).
 *
 * camel -> snake (always the regular rule): `_` before an upper-case letter that follows a
 * lower-case letter or a digit, and between an acronym and the next word; then lower case.
 * `numeroInterne` -> `numero_interne`, `referenceFactureCFA` -> `reference_facture_cfa`,
 * `IBAN` -> `iban`, `maitre1` -> `maitre1`.
 *
 * snake -> camel: the irregular names first (SPEC names with an acronym, which the regular inverse
 * cannot restore: `iban` -> `IBAN`), else each letter or digit after a `_` is upper-cased and the
 * `_` dropped. A leading `_` is kept (`_files`). A name that is already camelCase is unchanged.
 */

export type FieldCase = 'snake' | 'camel';

export function camelToSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function regularSnakeToCamel(name: string): string {
  return name.replace(/(?<=[a-zA-Z0-9])_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * The renaming function of one style. `irregular` lists camelCase names whose snake form does
 * not come back by the regular rule; they are restored exactly on the way to camelCase.
 */
export function fieldRenamer(style: FieldCase, irregular: readonly string[] = []): (name: string) => string {
  if (style === 'snake') return camelToSnake;
  const bySnake = new Map(irregular.map((name) => [camelToSnake(name), name]));
  return (name) => bySnake.get(name) ?? regularSnakeToCamel(name);
}
