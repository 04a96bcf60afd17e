SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0", "t1"."id" AS "t1.id", "t1"."semver" AS "t1.semver"
      FROM "device" "t0"
      LEFT JOIN "release" "t1" ON "t1"."id" = "t0"."should_be_running__release" AND (TRUE)
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.semver" AS "semver") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."semver" AS "semver") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN ("t1"."id" IS NOT NULL) THEN json_build_array(to_json("t1.o")) ELSE '[]'::json END AS "should_be_running__release") AS o)::text AS body
-- params: [1]
