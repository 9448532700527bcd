import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from './resources.js';

/**
 * The schemas this service provider publishes (`/Schemas`) and applies: what a PATCH path may
 * name is exactly what is listed here, so the discovery endpoints and the PATCH rules cannot
 * disagree.
 */
export interface SchemaAttribute {
  name: string;
  type: 'string' | 'boolean' | 'complex' | 'reference';
  multiValued: boolean;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'default';
  uniqueness: 'none' | 'server';
  subAttributes?: SchemaAttribute[];
  referenceTypes?: string[];
  canonicalValues?: string[];
}

const attribute = (name: string, more: Partial<SchemaAttribute> = {}): SchemaAttribute => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...more,
});
const complex = (name: string, subAttributes: SchemaAttribute[], more: Partial<SchemaAttribute> = {}) =>
  attribute(name, { type: 'complex', subAttributes, ...more });

export const SCHEMAS = [
  {
    id: USER_SCHEMA,
    name: 'User',
    description: 'A Support Desk user (userName and the primary email are the user email)',
    attributes: [
      attribute('userName', { required: true, uniqueness: 'server' }),
      complex('name', [attribute('formatted'), attribute('givenName'), attribute('familyName')]),
      attribute('displayName'),
      attribute('title'),
      attribute('userType'),
      attribute('preferredLanguage'),
      attribute('locale'),
      attribute('timezone'),
      attribute('active', { type: 'boolean' }),
      complex('emails', [attribute('value'), attribute('type'), attribute('primary', { type: 'boolean' })], {
        multiValued: true,
      }),
      complex(
        'groups',
        [
          attribute('value', { mutability: 'readOnly' }),
          attribute('$ref', { type: 'reference', referenceTypes: ['Group'], mutability: 'readOnly' }),
          attribute('display', { mutability: 'readOnly' }),
        ],
        { multiValued: true, mutability: 'readOnly' },
      ),
    ],
  },
  {
    id: ENTERPRISE_SCHEMA,
    name: 'EnterpriseUser',
    description: 'Enterprise attributes, kept in the user metadata',
    attributes: [
      attribute('employeeNumber'),
      attribute('costCenter'),
      attribute('organization'),
      attribute('division'),
      attribute('department'),
      complex('manager', [attribute('value')]),
    ],
  },
  {
    id: GROUP_SCHEMA,
    name: 'Group',
    description: 'A Support Desk group',
    attributes: [
      attribute('displayName', { required: true, uniqueness: 'server' }),
      complex(
        'members',
        [
          attribute('value', { mutability: 'immutable' }),
          attribute('$ref', { type: 'reference', referenceTypes: ['User'], mutability: 'immutable' }),
          attribute('type', { mutability: 'immutable', canonicalValues: ['User'] }),
        ],
        { multiValued: true },
      ),
    ],
  },
];

/** RFC 7643 §3.1: every resource has these besides its schema's attributes. */
const COMMON = [
  attribute('externalId', { caseExact: true }),
  attribute('id', { mutability: 'readOnly', caseExact: true }),
  attribute('schemas', { mutability: 'readOnly', multiValued: true }),
  complex('meta', [], { mutability: 'readOnly' }),
];

/** A resource type's attributes: its core schema's and its extensions' (an extension's under its URN). */
export interface ResourceSchema {
  core: string;
  extensions: string[];
}

export const USER_RESOURCE: ResourceSchema = { core: USER_SCHEMA, extensions: [ENTERPRISE_SCHEMA] };
export const GROUP_RESOURCE: ResourceSchema = { core: GROUP_SCHEMA, extensions: [] };

const attributesOf = (urn: string) => SCHEMAS.find((s) => s.id === urn)!.attributes;

const named = (list: SchemaAttribute[], name: string) =>
  list.find((a) => a.name.toLowerCase() === name.toLowerCase());

/**
 * A path's schema URN prefix (RFC 7644 §3.10: `urn:…:enterprise:2.0:User:department`), in its
 * canonical case, and the rest of the path; `urn` is null when the path has none. The core
 * schema's URN is dropped (its attributes are the resource's own).
 */
export function splitUrn(resource: ResourceSchema, path: string): { urn: string | null; rest: string } {
  const lower = path.toLowerCase();
  for (const urn of [resource.core, ...resource.extensions]) {
    if (lower === urn.toLowerCase()) return { urn: urn === resource.core ? null : urn, rest: '' };
    if (lower.startsWith(`${urn.toLowerCase()}:`))
      return { urn: urn === resource.core ? null : urn, rest: path.slice(urn.length + 1) };
  }
  return { urn: null, rest: path };
}

/**
 * The attribute `name` stands for (case-insensitively, RFC 7643 §2.1): one of the extension's
 * when `urn` names one, else the core schema's or a common one (`externalId`, `id`, `meta`).
 */
export function attributeNamed(
  resource: ResourceSchema,
  urn: string | null,
  name: string,
): SchemaAttribute | undefined {
  if (urn) return named(attributesOf(urn), name);
  return named(attributesOf(resource.core), name) ?? named(COMMON, name);
}

export const subAttributeNamed = (parent: SchemaAttribute, name: string) =>
  named(parent.subAttributes ?? [], name);

/**
 * RFC 7643 §2.4: the sub-attributes any multi-valued attribute's items may carry besides its own
 * (Okta sends a member's `display`). A PATCH value may hold them; they are not kept (the kept
 * check compares such items by their `value`).
 */
const MULTI_VALUED_DEFAULTS = [
  attribute('type'),
  attribute('primary', { type: 'boolean' }),
  attribute('display'),
  attribute('value'),
  attribute('$ref', { type: 'reference' }),
];

/** A sub-attribute a value of `parent` may name: its own, or in a multi-valued item one of §2.4's. */
export const itemSubAttributeNamed = (parent: SchemaAttribute, name: string) =>
  subAttributeNamed(parent, name) ?? (parent.multiValued ? named(MULTI_VALUED_DEFAULTS, name) : undefined);
