// OData names (snake_case, `__` between verb and noun) as GraphQL names: `belongs_to__application`
// is `belongsToApplication`, the resource `device_type` is the type `DeviceType`.

export function camelCase(name: string): string {
  return name.replace(/_+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.charAt(0).toUpperCase() + camel.slice(1);
}

/** English plurals, enough for resource names: `device` → `devices`, `device_type_alias` → `…Aliases`. */
export function plural(name: string): string {
  if (/(s|x|ch|sh)$/.test(name)) return `${name}es`;
  if (/[^aeiou]y$/.test(name)) return `${name.slice(0, -1)}ies`;
  return `${name}s`;
}
