import { type Fragment, param, raw, sql } from "../../db/sql.ts";
import type { FunctionName } from "../query.ts";

export const INT4_MAX = 2 ** 31 - 1;

// The characters JavaScript's String.prototype.trim removes: OData's trim removes whitespace, not
// only spaces (tabs, no-break spaces, the Unicode space separators, line terminators).
const whitespace =
  "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff";

/**
 * An int4 between 0 and `max`; null stays null (least and greatest would skip it). The functions
 * behind max() and min() of numeric are strict and read `value` once: a CASE would name it three
 * times, and a value holding a subquery (a count, a path) would run it three times, and three
 * times more for each substring nested in it (issue 28).
 */
function clamp(value: Fragment, max: number): Fragment {
  return sql`numeric_smaller(numeric_larger((${value})::numeric, 0), ${raw(String(max))})::int`;
}

/**
 * An OData function applied to its compiled arguments. Each argument is named once in the SQL, so
 * each is evaluated once, whatever it holds.
 */
export function functionCall(name: FunctionName, args: readonly Fragment[]): Fragment {
  const [a, b, c] = args as [Fragment, Fragment, Fragment];
  switch (name) {
    case "contains":
      return sql`(strpos(${a}, ${b}) > 0)`;
    case "substringof":
      return sql`(strpos(${b}, ${a}) > 0)`;
    case "startswith":
      return sql`starts_with(${a}, ${b})`;
    // Reversed, a suffix is a prefix (right(a, char_length(b)) = b would name b twice).
    case "endswith":
      return sql`starts_with(reverse(${a}), reverse(${b}))`;
    case "tolower":
      return sql`lower(${a})`;
    case "toupper":
      return sql`upper(${a})`;
    case "trim":
      return sql`btrim(${a}, ${param(whitespace, "text")})`;
    case "length":
      return sql`char_length(${a})`;
    // OData positions count from 0, SQL's from 1.
    case "indexof":
      return sql`(strpos(${a}, ${b}) - 1)`;
    // A negative start reads from the first character and a negative length reads nothing; both are
    // clamped into int4 first, so no bound makes substr fail (a failure could reveal a hidden row).
    case "substring": {
      const start = sql`${clamp(b, INT4_MAX - 1)} + 1`;
      return args.length === 3
        ? sql`substr(${a}, ${start}, ${clamp(c, INT4_MAX)})`
        : sql`substr(${a}, ${start})`;
    }
    case "concat":
      return sql`(${a} || ${b})`;
    case "replace":
      return sql`replace(${a}, ${b}, ${c})`;
    case "year":
    case "month":
    case "day":
    case "hour":
    case "minute":
      return sql`extract(${raw(name)} FROM ${a})::int`;
    case "second":
      return sql`floor(extract(second FROM ${a}))::int`;
    case "now":
      return sql`now()`;
    case "date":
      return sql`(${a})::date`;
    case "round":
      return sql`round((${a})::numeric)`;
    case "floor":
      return sql`floor((${a})::numeric)`;
    case "ceiling":
      return sql`ceil((${a})::numeric)`;
  }
}
