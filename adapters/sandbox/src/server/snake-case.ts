/**
 * The classic shape's field names: one deterministic mapping between the canonical camelCase
 * names of the SPEC (what the dataset keeps) and the snake_case names on the classic wire.
 *
 * camel → snake (always the regular rule): a `_` goes before an upper-case letter that follows a
 * lower-case letter or a digit, and between an acronym and the word after it; then everything is
 * lower-cased. `numeroInterne` → `numero_interne`, `referenceFactureCFA` → `reference_facture_cfa`,
 * `montantRQTHAnnee1` → `montant_rqth_annee1`, `IBAN` → `iban`, `maitre1` → `maitre1`.
 *
 * snake → camel: the irregular names below first (acronyms the regular rule cannot restore),
 * else the regular rule: each letter or digit after a `_` is upper-cased and the `_` dropped
 * (`numero_interne` → `numeroInterne`, `uai_cfa` → `uaiCfa`). A leading `_` is kept.
 */

/** Canonical names whose snake form does not come back by the regular rule. */
export const IRREGULAR_NAMES: readonly string[] = [
  'IBAN',
  'XAPIKEY',
  'EtatDossierResult',
  'referenceFactureCFA',
  'coutTotalPedagogieCFA',
  'attestationConventionSigneeCFA',
  'attestationConventionConformeJSON',
  'accompagnementDROM',
  'montantRQTHAnnee1',
  'montantRQTHAnnee2',
  'montantRQTHAnnee3',
  'montantRQTHAnnee4',
];

export function camelToSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function regularSnakeToCamel(name: string): string {
  return name.replace(/(?<=[a-zA-Z0-9])_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

const IRREGULAR_BY_SNAKE: ReadonlyMap<string, string> = new Map(IRREGULAR_NAMES.map((n) => [camelToSnake(n), n]));

export function snakeToCamel(name: string): string {
  return IRREGULAR_BY_SNAKE.get(name) ?? regularSnakeToCamel(name);
}

/** True for a name the classic wire accepts: no upper-case letter. */
export function isSnakeCase(name: string): boolean {
  return name === name.toLowerCase();
}
