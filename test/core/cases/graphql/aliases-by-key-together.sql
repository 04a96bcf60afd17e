SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."id" = ANY($1::int8[]))
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName", "t0"."id" AS "$key") AS o)::text AS body) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."device_name", "t0"."id" AS "__k0"
          FROM "device" "t0"
          WHERE (TRUE) AND ("t0"."id" = $2::int4)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."device_name" AS "deviceName") AS o)::text AS body) AS r) AS "r1"
-- params: [[41,42,987654,41],42]
