SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."name", "t0"."id" AS "__k0"
          FROM "organization" "t0"
          WHERE (TRUE) AND ("t0"."handle" = $1::text)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."name" AS "name") AS o)::text AS body) AS r) AS "r0", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."id", "t0"."commit", "t0"."belongs_to__application", "t0"."id" AS "__k0"
          FROM "release" "t0"
          WHERE (TRUE) AND ("t0"."status" = $2::text)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."commit" AS "commit", "t0"."belongs_to__application" AS "belongsToApplicationId") AS o)::text AS body) AS r) AS "r1", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device_tag" "t0"
      WHERE (TRUE)) AS r) AS "r2", (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."username", "t0"."id" AS "__k0"
          FROM "user" "t0"
          WHERE (TRUE) AND ("t0"."id" = $3::int4)
          ORDER BY "__k0" ASC) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."username" AS "username") AS o)::text AS body) AS r) AS "r3"
-- params: ["demo","failed",1]
