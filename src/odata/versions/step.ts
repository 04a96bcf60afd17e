/**
 * How one API version differs from the next one up, as data. Resource-level maps are keyed by the
 * NEXT version's resource name; field maps go from this version's name to the next version's.
 */
export interface VersionStep {
  readonly version: string;
  readonly next: string;
  /** Resources named otherwise in this version: this version's name → the next version's. */
  readonly renamedResources?: Readonly<Record<string, string>>;
  /** Resources of the next version that this one does not have (404 here). */
  readonly missingResources?: readonly string[];
  /** Fields and navigations named otherwise: this version's name → the next version's. */
  readonly renamed?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Fields and navigations of the next version that this one does not have (400 here). */
  readonly missing?: Readonly<Record<string, readonly string[]>>;
  /** Fields only this version has, read through a to-one path of the next version (v5 `device_type`). */
  readonly derived?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
}
