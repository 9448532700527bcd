// Types of @phc/format 1.0 (the package ships none): the PHC string format's serializer.
declare module '@phc/format' {
  export interface PhcObject {
    id: string;
    version?: number;
    params?: Record<string, number | string>;
    salt?: Buffer;
    hash?: Buffer;
  }
  export function serialize(opts: PhcObject): string;
  export function deserialize(phcstr: string): PhcObject & { params?: Record<string, number> };
}
