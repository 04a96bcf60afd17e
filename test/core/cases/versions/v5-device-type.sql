SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."is_of__device_type", "t0"."id" AS "__k0"
      FROM "device" "t0"
      LEFT JOIN "device_type" "t1" ON "t1"."id" = "t0"."is_of__device_type" AND (TRUE)
      WHERE (TRUE) AND ("t1"."slug" = $1::text)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", (SELECT "t1"."slug"
        FROM "device_type" "t1"
        WHERE "t1"."id" = "t0"."is_of__device_type" AND (TRUE)) AS "device_type") AS o)::text AS body
-- params: ["intel-nuc"]
