SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" DESC, "t0"."__k1" DESC), '[]'::json)
    FROM (SELECT "t0"."id", "t2"."app_name" AS "__k0", "t0"."id" AS "__k1", "t2"."id" AS "t1.id", "t2"."app_name" AS "t1.app_name"
      FROM "device" "t0"
      LEFT JOIN "application" "t2" ON "t2"."id" = "t0"."belongs_to__application" AND (TRUE)
      WHERE (TRUE)
      ORDER BY "__k0" DESC, "__k1" DESC
      LIMIT 4) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."t1.id" AS "id", "t0"."t1.app_name" AS "app_name") AS "t1"
    CROSS JOIN LATERAL (SELECT "t1"."app_name" AS "appName") AS "t1.o"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN ("t1"."id" IS NOT NULL) THEN to_json("t1.o") END AS "belongsToApplication") AS o)::text AS body
-- params: []
