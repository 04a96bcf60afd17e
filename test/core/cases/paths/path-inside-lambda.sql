SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."commit", "t0"."id" AS "__k0"
      FROM "release" "t0"
      WHERE (TRUE) AND EXISTS (SELECT 1
        FROM "device" "t1"
        LEFT JOIN "application" "t2" ON "t2"."id" = "t1"."belongs_to__application" AND (TRUE)
        WHERE ("t1"."is_running__release" = "t0"."id" AND (TRUE)) AND (("t2"."app_name" = $1::text) OR ("t1"."cpu_usage" = $2::int4)))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."commit" AS "commit") AS o)::text AS body
-- params: ["sensors",99]
