"""A third set of parallel families, written after the rules of
chat/services/turn/{clarify,subjects,naming,retrieve}.py were chosen and
never fitted on: each document words its facts its own way (a template per
document), as documents from different authors do. ``bench/parallel_documents.py
--half fresh`` reads them."""

from __future__ import annotations

from bench.parallel_docs.corpus import Family, Subject

FRESH: tuple[Family, ...] = (
    Family(
        "pet insurance",
        "en",
        ("the {name} protects dogs and cats against unexpected vet bills.",),
        (
            "the {name} reimburses {value} of eligible veterinary bills.",
            "with the {name} you get back {value} of every eligible veterinary bill.",
            "eligible veterinary bills are reimbursed at {value} under the {name}.",
        ),
        (
            "claims under the {name} are paid within {value}.",
            "the {name} pays claims within {value}.",
            "expect payment of a {name} claim within {value}.",
        ),
        "What share of veterinary bills is reimbursed?",
        "What share of veterinary bills does the {mention} plan reimburse?",
        "And how fast are claims paid?",
        "What share of veterinary bills does the Diamond plan reimburse?",
        (
            Subject("PetCare Basic plan", "PetCare Basic", "Basic", "70%", "ten days"),
            Subject("PetCare Plus plan", "PetCare Plus", "Plus", "80%", "five days"),
            Subject("PetCare Premium plan", "PetCare Premium", "Premium", "90%", "two days"),
        ),
    ),
    Family(
        "laptops",
        "en",
        ("the {name} is a lightweight laptop for students and travellers.",),
        (
            "the {name} weighs {value}.",
            "at {value}, the {name} is easy to carry.",
        ),
        (
            "on a full charge the {name} lasts {value}.",
            "the battery of the {name} runs for {value} of video playback.",
        ),
        "How much does the laptop weigh?",
        "How much does the {mention} weigh?",
        "And how long does the battery last?",
        "How much does the Zenbook Z13 weigh?",
        (
            Subject("Aero 14 data sheet", "Aero 14", "Aero 14", "1.2 kg", "12 hours"),
            Subject("Aero 16 data sheet", "Aero 16", "Aero 16", "1.7 kg", "9 hours"),
        ),
    ),
    Family(
        "parking permits",
        "en",
        ("this page describes the {name} of the city.",),
        (
            "a permit for the {name} costs {value} a year.",
            "residents of the {name} pay {value} a year for a permit.",
            "the yearly permit fee in the {name} is {value}.",
        ),
        (
            "visitors to the {name} may park for {value}.",
            "in the {name}, visitors can stay for {value}.",
            "the {name} allows visitors {value} of parking.",
        ),
        "How much does a parking permit cost?",
        "How much does a parking permit cost in the {mention} zone?",
        "And how long may visitors park?",
        "How much does a parking permit cost in the harbour zone?",
        (
            Subject("Parking in the North zone", "North zone", "North", "120 euros", "two hours"),
            Subject("Parking in the Centre zone", "Centre zone", "Centre", "240 euros", "one hour"),
            Subject("Parking in the South zone", "South zone", "South", "90 euros", "three hours"),
        ),
    ),
    Family(
        "printer faq and guide",
        "en",
        (
            "answers to frequent questions about the {name}.",
            "this guide walks you through the {name} from unboxing to printing.",
        ),
        (
            "to clean the print head of the {name}, {value}.",
            "the print head of the {name} is cleaned by {value}.",
        ),
        ("the {name} prints up to {value} pages a minute.",),
        "How do I clean the print head?",
        "How do I clean the print head of the {mention}?",
        "And how fast does it print?",
        "How do I clean the print head of the Epson L3250?",
        (
            Subject("Printer P10 FAQ", "Printer P10", "P10", "run the cleaning cycle from the menu", "20"),
            Subject(
                "Printer P20 setup guide", "Printer P20", "P20", "wiping it with a lint-free cloth", "35"
            ),
        ),
    ),
    Family(
        "persian gym plans",
        "fa",
        ("باشگاه {name} برای ورزش روزانه مناسب است.",),
        (
            "شهریه ماهانه {name} {value} است.",
            "برای عضویت در {name} ماهانه {value} پرداخت می‌شود.",
        ),
        ("ساعت کار {name} {value} است.",),
        "شهریه ماهانه چقدر است؟",
        "شهریه ماهانه {mention} چقدر است؟",
        "و ساعت کار چیست؟",
        "شهریه ماهانه باشگاه المپیک چقدر است؟",
        (
            Subject("باشگاه آرش", "باشگاه آرش", "آرش", "یک میلیون تومان", "هفت صبح تا ده شب"),
            Subject("باشگاه سپهر", "باشگاه سپهر", "سپهر", "دو میلیون تومان", "شش صبح تا یازده شب"),
        ),
    ),
)
