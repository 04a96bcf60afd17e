SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."app_name" AS "t1.app_name"
      FROM "device" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.app_name" AS "app_name") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "app_name") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN ("t1"."id" IS NOT NULL) THEN json_build_array(to_json("t1.o")) ELSE '[]'::json END AS "belongs_to__application") AS o)::text AS body
-- params: [1]
