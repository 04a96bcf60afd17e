SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND ((SELECT (SELECT "t2"."handle"
          FROM "organization" "t2"
          WHERE "t2"."id" = "t1"."organization" AND (TRUE))
        FROM "application" "t1"
        WHERE "t1"."id" = "t0"."belongs_to__application" AND (TRUE)) = $1::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: ["acme"]
