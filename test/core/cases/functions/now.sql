SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."commit", "t0"."id" AS "__k0"
      FROM "release" "t0"
      WHERE (TRUE) AND ("t0"."created_at" < now())
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."commit" AS "commit") AS o)::text AS body
-- params: []
