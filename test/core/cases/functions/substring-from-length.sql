SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (substr("t0"."device_name", numeric_smaller(numeric_larger(($1::int4)::numeric, 0), 2147483646)::int + 1, numeric_smaller(numeric_larger(($2::int4)::numeric, 0), 2147483647)::int) = $3::text)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: [0,7,"weather"]
