SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."should_be_running__release", "t0"."id" AS "__k0"
      FROM "device" "t0"
      LEFT JOIN "release" "t1" ON "t1"."id" = "t0"."should_be_running__release" AND (TRUE)
      WHERE (TRUE) AND ("t1"."semver" = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN "t0"."should_be_running__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_running__release") END AS "should_be_running__release") AS o)::text AS body
-- params: ["1.0.0"]
