SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t1"."__k0" ASC), '[]'::json)
        FROM (SELECT "t1"."tag_key", "t1"."value", "t1"."id" AS "__k0"
          FROM "device_tag" "t1"
          WHERE ("t1"."device" = "t0"."id" AND (TRUE))
          ORDER BY "__k0" ASC) AS "t1"
        CROSS JOIN LATERAL (SELECT "t1"."tag_key" AS "tag_key", "t1"."value" AS "value") AS o) AS "device_tag", (SELECT coalesce(json_agg(to_json(o) ORDER BY "t2"."__k0" ASC), '[]'::json)
        FROM (SELECT "t2"."name", "t2"."value", "t2"."id" AS "__k0"
          FROM "device_environment_variable" "t2"
          WHERE ("t2"."device" = "t0"."id" AND (TRUE))
          ORDER BY "__k0" ASC) AS "t2"
        CROSS JOIN LATERAL (SELECT "t2"."name" AS "name", "t2"."value" AS "value") AS o) AS "device_environment_variable") AS o)::text AS body
-- params: [1]
