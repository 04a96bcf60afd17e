SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."os_variant", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ("t0"."os_variant" IS DISTINCT FROM $1::text) AND ("t0"."belongs_to__application" = $2::int4)
      ORDER BY "__k0" ASC
      LIMIT 4) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."os_variant" AS "os_variant") AS o)::text AS body
-- params: ["prod",3]
