/**
 * Seams: where exactly one thing must decide, like Fastify's `decorate`. Each seam has one
 * provider; a plugin may replace the kernel's default, but two plugins providing the same seam is
 * a start-up error naming both, and nothing can change once the kernel is ready.
 */
import type { AdmissionProvider } from '../limits/admission.js';
import { kernelError } from '../errors/kernel-errors.js';

export interface Seams {
  /** Pipeline step 4 (SPEC 1.1): the store budget by default, the hub when its plugin is on. */
  admission: AdmissionProvider;
}

export type SeamName = keyof Seams;

export class SeamRegistry {
  private readonly providers = new Map<SeamName, { provider: Seams[SeamName]; by: string }>();
  private frozen = false;

  provide<K extends SeamName>(seam: K, provider: Seams[K], by: string): void {
    if (this.frozen) throw kernelError('OPCO_ERR_SEAMS_FROZEN', { by, seam });
    const existing = this.providers.get(seam);
    if (existing) {
      throw kernelError('OPCO_ERR_SEAM_TWO_PROVIDERS', {
        seam,
        first: existing.provider.name,
        firstBy: existing.by,
        second: provider.name,
        secondBy: by,
      });
    }
    this.providers.set(seam, { provider, by });
  }

  has(seam: SeamName): boolean {
    return this.providers.has(seam);
  }

  get<K extends SeamName>(seam: K): Seams[K] {
    const entry = this.providers.get(seam);
    if (!entry) throw kernelError('OPCO_ERR_SEAM_UNPROVIDED', { seam });
    return entry.provider;
  }

  freeze(): void {
    this.frozen = true;
  }
}
