SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND EXISTS (SELECT 1
        FROM "device_tag" "t1"
        WHERE ("t1"."device" = "t0"."id" AND (TRUE)) AND ("t1"."tag_key" = $1::text) AND ("t1"."value" = $2::text))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body
-- params: ["location","hall"]
