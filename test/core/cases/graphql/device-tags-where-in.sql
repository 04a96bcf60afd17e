SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."tag_key", "t0"."value", "t0"."device", "t0"."id" AS "__k0"
      FROM "device_tag" "t0"
      WHERE (TRUE) AND ("t0"."value" = ANY($1::text[]))
      ORDER BY "__k0" ASC
      LIMIT 1000) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."tag_key" AS "tagKey", "t0"."value" AS "value", "t0"."device" AS "deviceId") AS o)::text AS body
-- params: [["hall","roof","nowhere"]]
