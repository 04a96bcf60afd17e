SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."is_online", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ((("t0"."is_online" = $1::bool)) IS NOT TRUE) AND ((SELECT "t1"."app_name"
        FROM "application" "t1"
        WHERE "t1"."id" = "t0"."belongs_to__application" AND (TRUE)) = $2::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."is_online" AS "is_online") AS o)::text AS body
-- params: [true,"kiosks"]
