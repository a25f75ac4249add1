/**
 * French-looking identities for the generated dossiers. Identifiers carry real check digits
 * (SIREN/SIRET Luhn, RIB key, IBAN mod 97) so that a validator in the proxy or in a client
 * accepts them exactly as it would accept production data.
 */
import type { Random } from './prng.js';

export const NOMS = [
  'Martin',
  'Bernard',
  'Thomas',
  'Petit',
  'Robert',
  'Richard',
  'Durand',
  'Dubois',
  'Moreau',
  'Laurent',
  'Simon',
  'Michel',
  'Lefebvre',
  'Leroy',
  'Roux',
  'David',
  'Bertrand',
  'Morel',
  'Fournier',
  'Girard',
  'Bonnet',
  'Dupont',
  'Lambert',
  'Fontaine',
  'Rousseau',
  'Vincent',
  'Muller',
  'Lefèvre',
  'Faure',
  'André',
  'Mercier',
  'Blanc',
  'Guérin',
  'Boyer',
  'Garnier',
  'Chevalier',
  'François',
  'Legrand',
  'Gauthier',
  'Garcia',
  'Perrin',
  'Robin',
  'Clément',
  'Morin',
  'Nicolas',
  'Henry',
  'Roussel',
  'Mathieu',
  'Gautier',
  'Masson',
  'Marchand',
  'Duval',
  'Denis',
  'Dumont',
  'Marie',
  'Lemaire',
  'Noël',
  'Meyer',
  'Dufour',
  'Meunier',
  'Brun',
  'Blanchard',
  'Giraud',
  'Joly',
  'Rivière',
  'Lucas',
  'Brunet',
  'Gaillard',
  'Barbier',
  'Arnaud',
] as const;

export const PRENOMS = [
  'Lucas',
  'Hugo',
  'Louis',
  'Gabriel',
  'Arthur',
  'Jules',
  'Nathan',
  'Raphaël',
  'Léo',
  'Adam',
  'Théo',
  'Tom',
  'Maël',
  'Noah',
  'Ethan',
  'Mathis',
  'Enzo',
  'Timéo',
  'Sacha',
  'Yanis',
  'Emma',
  'Jade',
  'Louise',
  'Alice',
  'Chloé',
  'Lina',
  'Léa',
  'Manon',
  'Rose',
  'Anna',
  'Inès',
  'Camille',
  'Lola',
  'Zoé',
  'Juliette',
  'Sarah',
  'Lou',
  'Clara',
  'Mila',
  'Ambre',
  'Océane',
  'Maëlys',
  'Éloïse',
  'Noémie',
  'Romane',
  'Kylian',
  'Baptiste',
  'Clément',
  'Axel',
] as const;

const ENSEIGNES = [
  'Boulangerie',
  'Garage',
  'Salon de coiffure',
  'Restaurant',
  'Pharmacie',
  'Menuiserie',
  'Électricité',
  'Plomberie',
  'Cabinet comptable',
  'Pâtisserie',
  'Boucherie',
  'Fleuriste',
  'Transports',
  'Informatique',
  'Hôtel',
  'Carrosserie',
  'Maçonnerie',
  'Agence immobilière',
] as const;
const FORMES = ['SARL', 'SAS', 'EURL', 'SASU', ''] as const;
const VILLES = [
  'Lyon',
  'Nantes',
  'Rennes',
  'Lille',
  'Bordeaux',
  'Toulouse',
  'Grenoble',
  'Dijon',
  'Tours',
  'Angers',
  'Reims',
  'Metz',
  'Limoges',
  'Brest',
  'Caen',
  'Rouen',
  'Nancy',
  'Amiens',
] as const;

/** Real-looking diplomas; the RNCP codes are invented but shaped like the real register's. */
export const FORMATIONS = [
  { rncp: 'RNCP37859', intituleQualification: 'CAP Boulanger', heures: 840 },
  { rncp: 'RNCP35316', intituleQualification: 'CAP Cuisine', heures: 800 },
  { rncp: 'RNCP38140', intituleQualification: 'CAP Pâtissier', heures: 840 },
  { rncp: 'RNCP37863', intituleQualification: 'CAP Métiers de la coiffure', heures: 800 },
  { rncp: 'RNCP34031', intituleQualification: 'BTS Management commercial opérationnel', heures: 1350 },
  { rncp: 'RNCP35521', intituleQualification: 'BTS Comptabilité et gestion', heures: 1350 },
  { rncp: 'RNCP31114', intituleQualification: 'Titre professionnel Développeur web et web mobile', heures: 1050 },
  {
    rncp: 'RNCP35307',
    intituleQualification: 'Bac pro Métiers de l’électricité et de ses environnements connectés',
    heures: 1850,
  },
  { rncp: 'RNCP36183', intituleQualification: 'BP Coiffure', heures: 1100 },
  { rncp: 'RNCP34466', intituleQualification: 'Licence pro Métiers de l’informatique', heures: 600 },
  { rncp: 'RNCP37240', intituleQualification: 'Master Management et commerce international', heures: 900 },
  {
    rncp: 'RNCP35806',
    intituleQualification: 'CAP Maintenance des véhicules option voitures particulières',
    heures: 800,
  },
] as const;

export function denomination(random: Random, nom: string): string {
  const forme = random.pick(FORMES);
  const name = `${random.pick(ENSEIGNES)} ${nom}`;
  return forme ? `${forme} ${name}` : name;
}

export function cfaName(random: Random): string {
  return `CFA ${random.pick(['des Métiers', 'Interprofessionnel', 'du Commerce', 'de l’Artisanat', 'du BTP'])} de ${random.pick(VILLES)}`;
}

/** Luhn check digit making `payload + digit` Luhn-valid. */
export function luhnDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    // Doubling starts at the rightmost payload digit because the check digit will follow it.
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

export function luhnValid(value: string): boolean {
  return /^\d+$/.test(value) && luhnDigit(value.slice(0, -1)) === value.slice(-1);
}

/** SIRET whose SIREN part and whole 14 digits are both Luhn-valid, as INSEE issues them. */
export function siret(random: Random): string {
  const siren8 = String(random.int(1, 9)) + random.digits(7);
  const siren = siren8 + luhnDigit(siren8);
  const nic4 = random.digits(4);
  return siren + nic4 + luhnDigit(siren + nic4);
}

/** Remainder mod 97 of a long decimal string, chunked to stay within safe integers. */
export function mod97(digits: string): number {
  let rest = 0;
  for (let i = 0; i < digits.length; i += 7) rest = Number(String(rest) + digits.slice(i, i + 7)) % 97;
  return rest;
}

/**
 * French IBAN from a random RIB. The RIB key makes the BBAN divisible by 97, which is why
 * French IBANs come out as FR76 — no need to force the prefix.
 */
export function iban(random: Random): string {
  const banque = random.pick(['30004', '30002', '10278', '20041', '30003', '16006', '17515']);
  const guichet = random.digits(5);
  const compte = random.digits(11);
  const cle = 97 - ((89 * Number(banque) + 15 * Number(guichet) + 3 * Number(compte)) % 97);
  const bban = banque + guichet + compte + String(cle).padStart(2, '0');
  // 'F' = 15, 'R' = 27 in the IBAN letter-to-number table.
  const check = 98 - mod97(bban + '1527' + '00');
  return `FR${String(check).padStart(2, '0')}${bban}`;
}

export function ibanValid(value: string): boolean {
  const moved = value.slice(4) + value.slice(0, 4);
  const numeric = moved.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  return mod97(numeric) === 1;
}

/** Dates are handled as UTC `YYYY-MM-DD` strings so that no time zone can shift them. */
export function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Days since 1970-01-01 without building a Date object: generation does this ~20 times per dossier. */
function dayNumber(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 86_400_000;
}

/** Inverse of dayNumber (H. Hinnant's civil_from_days), far cheaper than Date#toISOString. */
function fromDayNumber(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y}-${m < 10 ? '0' : ''}${m}-${d < 10 ? '0' : ''}${d}`;
}

export function addDays(date: string, days: number): string {
  return fromDayNumber(dayNumber(date) + days);
}

export function daysBetween(from: string, to: string): number {
  return dayNumber(to) - dayNumber(from);
}

export function isIsoDate(value: string): boolean {
  return (
    /^\d{4}-\d{2}-\d{2}$/.test(value) &&
    !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
    isoDate(new Date(`${value}T00:00:00Z`)) === value
  );
}

export function today(): string {
  return isoDate(new Date());
}
