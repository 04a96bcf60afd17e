SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC, "t0"."__k1" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", (SELECT count(*)::int
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE)) AND ("t1"."is_online" = $1::bool)) AS "__k0", "t0"."id" AS "__k1"
      FROM "application" "t0"
      WHERE (TRUE)
      ORDER BY "__k0" DESC, "__k1" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name") AS o)::text AS body
-- params: [false]
