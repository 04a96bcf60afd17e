SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."actor", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (coalesce("t0"."actor") IS NOT NULL)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN coalesce("t0"."actor") IS NULL THEN NULL ELSE json_build_object('__id', coalesce("t0"."actor")) END AS "actor") AS o)::text AS body
-- params: []
