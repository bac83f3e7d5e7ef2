import type { PortHooks } from '../engine/index.js';
import { RunCapture } from '../records/run-capture.js';

type HttpHook = NonNullable<PortHooks['http']>;
type LookupHook = NonNullable<PortHooks['lookup']>;

/**
 * The port hooks of a champion run that has shadows: every HTTP answer (or failure) is kept exactly as a
 * recording keeps it (RunCapture: by site and attempt), so the shadows are answered from it (replay's
 * RecordedCalls) and never call out again. Each call is handed on to the recording's hooks (`inner`) when
 * the run is recorded, else made on the port. Lookups are only handed on: shadows read the collections
 * themselves.
 */
export class ChampionCapture extends RunCapture {
  inner: PortHooks | undefined;

  override lookup(...[site, request, proceed]: Parameters<LookupHook>): ReturnType<LookupHook> {
    return this.inner?.lookup ? this.inner.lookup(site, request, proceed) : proceed(request);
  }

  override http(...[site, request, proceed]: Parameters<HttpHook>): ReturnType<HttpHook> {
    const inner = this.inner?.http?.bind(this.inner);
    return super.http(site, request, inner ? (asked) => inner(site, asked, proceed) : proceed);
  }
}
