SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."last_connectivity_event", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (extract(minute FROM "t0"."last_connectivity_event")::int = $1::int4) AND (floor(extract(second FROM "t0"."last_connectivity_event"))::int = $2::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."last_connectivity_event" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "last_connectivity_event") AS o)::text AS body
-- params: [30,0]
