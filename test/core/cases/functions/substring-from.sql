SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (substr("t0"."device_name", (CASE WHEN $1::int4 < 0 THEN 0 WHEN $2::int4 > 2147483646 THEN 2147483646 ELSE $3::int4 END)::int + 1) = $4::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: [7,7,7,"11"]
