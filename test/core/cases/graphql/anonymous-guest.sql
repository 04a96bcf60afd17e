SELECT (SELECT r."body"
    FROM (SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
        FROM (SELECT "t0"."app_name", "t0"."id" AS "__k0"
          FROM "application" "t0"
          WHERE ("t0"."is_public") AND ("t0"."is_host" = $1::bool)
          ORDER BY "__k0" ASC
          LIMIT 1000) AS "t0"
        CROSS JOIN LATERAL (SELECT "t0"."app_name" AS "appName") AS o)::text AS body) AS r) AS "r0", (SELECT r."count"
    FROM (SELECT count(*)::int AS count
      FROM "device" "t0"
      WHERE (FALSE)) AS r) AS "r1"
-- params: [false]
