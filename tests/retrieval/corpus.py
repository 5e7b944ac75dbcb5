"""Small hand-written corpus for the retrieval tests."""

from __future__ import annotations

SOLAR = [
    "Solar panels convert sunlight into electricity using photovoltaic cells.",
    "Rooftop solar installations lower household electricity bills.",
    "Photovoltaic modules lose a little efficiency as they heat up.",
    "A solar inverter turns the panels' direct current into alternating current.",
    "Solar farms need large areas of land with strong sunlight.",
    "Batteries store solar electricity for use after sunset.",
    "Monocrystalline solar cells are more efficient than polycrystalline ones.",
    "Net metering pays homeowners for surplus solar power sent to the grid.",
    "Dust on solar panels reduces how much electricity they generate.",
    "Solar panel output peaks around noon on clear days.",
    "Tracking mounts tilt solar panels to follow the sun across the sky.",
    "Thin-film solar cells are light and flexible but less efficient.",
    "Solar energy is a renewable source of electricity with no fuel costs.",
    "The angle of a solar panel should match the site's latitude.",
    "Shading a single solar cell can cut the output of a whole string of panels.",
    "Perovskite solar cells are a promising new photovoltaic technology.",
    "Solar water heaters use sunlight to warm water directly.",
    "Microinverters let each solar panel produce power independently.",
    "Hail and snow loads are tested when certifying solar panels.",
    "Community solar projects let renters buy a share of a solar farm.",
]

KNITTING = [
    "Knitting needles come in bamboo, metal and plastic.",
    "A purl stitch is the reverse of a knit stitch.",
    "Merino wool yarn is soft enough for scarves.",
    "Casting on is the first step of every knitting project.",
]

COOKING = [
    "Simmer the tomato sauce for twenty minutes with basil.",
    "Knead bread dough until it is smooth and elastic.",
    "Roast the vegetables at two hundred degrees until golden.",
]
