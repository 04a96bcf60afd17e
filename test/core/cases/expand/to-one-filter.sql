SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."organization" AS "t1.organization", "t1"."app_name" AS "t1.app_name", "t3"."id" AS "t3.id", "t3"."status" AS "t3.status"
      FROM "device" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      LEFT JOIN "release" "t3" ON "t3"."id" = "t0"."is_running__release" AND (TRUE)
      WHERE (TRUE) AND (("t0"."id" <= $1::int4) OR ("t0"."id" = $2::int4))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.organization" AS "organization", "t0"."t1.app_name" AS "app_name") AS "t1"
    LEFT JOIN "organization" "t2" ON "t2"."id" = "t1"."organization" AND (TRUE)
    CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "app_name") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."t3.id" AS "id", "t0"."t3.status" AS "status") AS "t3"
    CROSS JOIN LATERAL (SELECT "t3"."id" AS "id") AS "t3.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN ("t1"."id" IS NOT NULL) AND ("t2"."handle" = $3::text) THEN json_build_array(to_json("t1.o")) ELSE '[]'::json END AS "belongs_to__application", CASE WHEN ("t3"."id" IS NOT NULL) AND ("t3"."status" = $4::text) THEN json_build_array(to_json("t3.o")) ELSE '[]'::json END AS "is_running__release") AS o)::text AS body
-- params: [3,61,"demo","success"]
