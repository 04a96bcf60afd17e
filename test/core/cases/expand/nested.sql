SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."belongs_to__application", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT coalesce((SELECT json_build_array(to_json(o))
          FROM "application" "t1"
          CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "app_name", (SELECT coalesce((SELECT json_build_array(to_json(o))
                FROM "organization" "t2"
                CROSS JOIN LATERAL (SELECT "t2"."handle" AS "handle") AS o
                WHERE ("t2"."id" = "t1"."organization" AND (TRUE))), '[]'::json)) AS "organization") AS o
          WHERE ("t1"."id" = "t0"."belongs_to__application" AND (TRUE))), '[]'::json)) AS "belongs_to__application") AS o)::text AS body
-- params: [1]
