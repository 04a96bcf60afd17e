SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (("t0"."device_name" = $1::text) OR ("t0"."device_name" = $2::text))
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: ["kiosks-01","weather-stations-02"]
