SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."app_name", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE) AND ((SELECT count(*)::int
        FROM "device" "t1"
        WHERE ("t1"."belongs_to__application" = "t0"."id" AND (TRUE))) > $1::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."app_name" AS "app_name") AS o)::text AS body
-- params: [3]
