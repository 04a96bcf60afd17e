SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."is_online", "t0"."id" AS "__k0"
      FROM "device" "t0"
      LEFT JOIN "application" "t1" ON "t1"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE) AND ((("t0"."is_online" = $1::bool)) IS NOT TRUE) AND ("t1"."app_name" = $2::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."is_online" AS "is_online") AS o)::text AS body
-- params: [true,"kiosks"]
