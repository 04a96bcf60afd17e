SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (starts_with(reverse("t0"."device_name"), reverse($1::text)) OR starts_with(reverse("t0"."device_name"), reverse($2::text)))
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "deviceName") AS o)::text AS body
-- params: ["-01","-02"]
