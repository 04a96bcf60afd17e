SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."should_be_running__release", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."id" = $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT coalesce((SELECT json_build_array(to_json(o))
          FROM "release" "t1"
          CROSS JOIN LATERAL (SELECT "t1"."semver" AS "semver") AS o
          WHERE ("t1"."id" = "t0"."should_be_running__release" AND (TRUE))), '[]'::json)) AS "should_be_running__release") AS o)::text AS body
-- params: [1]
