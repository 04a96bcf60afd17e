SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."slug", "t0"."id" AS "__k0"
      FROM "application" "t0"
      WHERE (TRUE) AND ("t0"."slug" = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."slug" AS "slug") AS o)::text AS body
-- params: ["demo/kiosks"]
