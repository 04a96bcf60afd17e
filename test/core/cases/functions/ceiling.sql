SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."cpu_usage", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (ceil(((("t0"."cpu_usage")::numeric / ($1::numeric)::numeric))::numeric) = $2::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."cpu_usage" AS "cpu_usage") AS o)::text AS body
-- params: [3,33]
