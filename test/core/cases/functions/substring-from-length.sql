SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (substr("t0"."device_name", (CASE WHEN $1::int4 < 0 THEN 0 WHEN $2::int4 > 2147483646 THEN 2147483646 ELSE $3::int4 END)::int + 1, (CASE WHEN $4::int4 < 0 THEN 0 WHEN $5::int4 > 2147483647 THEN 2147483647 ELSE $6::int4 END)::int) = $7::text)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: [0,0,0,7,7,7,"weather"]
