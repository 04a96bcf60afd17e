SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."app_name", "t0"."slug", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE ("t0"."is_public")
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "app_name", "t0"."slug" AS "slug") AS o)::text AS body
-- params: []
