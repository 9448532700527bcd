import type { TSchema } from 'typebox';

export type Json = Record<string, unknown>;

/** TypeBox → plain JSON Schema; every schema carrying `$id` becomes a component and a `$ref`. */
export function schemaTo(schema: TSchema | Json, components: Json): Json {
  const plain = JSON.parse(JSON.stringify(schema)) as Json;
  const walk = (node: unknown, isRoot: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    const out: Json = {};
    for (const [k, v] of Object.entries(obj)) if (k !== '$id') out[k] = walk(v, false);
    if (typeof obj.$id === 'string' && !isRoot) {
      const name = obj.$id.replace(/[^A-Za-z0-9._-]/g, '_');
      components[name] = out;
      return { $ref: `#/components/schemas/${name}` };
    }
    return out;
  };
  return walk(plain, false) as Json;
}
