"""The parallel-documents corpus: families of documents that say the same
kind of thing about different subjects (README.md beside this file).

Each :class:`Family` is built from templates: every document opens with a
sentence that names its subject, then states two facts (the first asked by
the family's ``question``, the second by its ``follow_up``). A family's
templates may name the subject in the fact sentences ("The Kettle K1 comes
with …"), leave it out ("The warranty lasts …"), or mix both (the templates
are taken in turn, document by document). A document's title may be short,
long (over 80 characters) or missing (``title=""``: titled from its text at
ingestion).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Subject:
    # The document's title ("" for none: titled at ingestion).
    title: str
    # How the documents name it ("the Kettle K1"), and how a question does ("kettle").
    name: str
    mention: str
    # The values of the two facts.
    first: str
    second: str


@dataclass(frozen=True)
class Family:
    key: str
    language: str
    # The opening sentence, the first fact's and the second's: each a list of
    # templates taken in turn ({name}, {value}).
    intro: tuple[str, ...]
    facts: tuple[str, ...]
    seconds: tuple[str, ...]
    # Unqualified question; qualified (with {mention}); the follow-up after a
    # choice; a question about a subject no document covers.
    question: str
    qualified: str
    follow_up: str
    uncovered: str
    subjects: tuple[Subject, ...]

    def documents(self) -> list[tuple[Subject, str]]:
        """Each subject with its document's text."""
        out = []
        for i, s in enumerate(self.subjects):
            parts = [
                self.intro[i % len(self.intro)].format(name=s.name, value=""),
                self.facts[i % len(self.facts)].format(name=s.name, value=s.first),
                self.seconds[i % len(self.seconds)].format(name=s.name, value=s.second),
            ]
            out.append((s, "\n\n".join(_capital(p) for p in parts)))
        return out


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


LONG = (
    " quick reference card, covering assembly, settings, cleaning, descaling, storage and resetting the unit"
)

FAMILIES: tuple[Family, ...] = (
    Family(
        "appliances",
        "en",
        ("the {name} is designed for everyday use in a home kitchen.",),
        (
            "the {name} comes with a limited manufacturer warranty of {value} from delivery.",
            "the {name} is covered by a manufacturer warranty of {value} from the date of delivery.",
        ),
        ("to descale the {name}, {value}.",),
        "How long is the warranty?",
        "How long is the warranty of the {mention}?",
        "And how do I descale it?",
        "How long is the warranty of the dishwasher?",
        (
            Subject("Kettle K1", "Kettle K1", "kettle", "two years", "boil a mix of water and vinegar"),
            Subject("Toaster T2", "Toaster T2", "toaster", "three years", "wipe the crumb tray with vinegar"),
            Subject("Blender B3", "Blender B3", "blender", "four years", "run it with warm soapy water"),
            Subject("Grinder G4" + LONG, "Grinder G4", "grinder", "five years", "brush out the burrs"),
            Subject("Mixer M5" + LONG, "Mixer M5", "mixer", "one year", "soak the whisks in citric acid"),
            Subject("", "Juicer J6", "juicer", "six years", "rinse the sieve with lemon water"),
            Subject("Fryer F7", "Fryer F7", "fryer", "seven years", "clean the basket with baking soda"),
        ),
    ),
    Family(
        "drug leaflets",
        "en",
        ("{name} relieves pain and lowers fever.",),
        ("the maximum daily dose of {name} for adults is {value}.",),
        ("for patients over 70, {name} should be limited to {value}.",),
        "What is the maximum daily dose for adults?",
        "What is the maximum daily dose of {mention} for adults?",
        "And for patients over 70?",
        "What is the maximum daily dose of naproxen for adults?",
        (
            Subject("Ibuprofen leaflet", "ibuprofen", "ibuprofen", "1,200 mg", "800 mg a day"),
            Subject("Paracetamol leaflet", "paracetamol", "paracetamol", "4 g", "3 g a day"),
            Subject("Aspirin leaflet", "aspirin", "aspirin", "3 g", "1 g a day"),
        ),
    ),
    Family(
        "insurance tiers",
        "en",
        ("the {name} is a health insurance plan for individuals and families.",),
        (
            "the annual deductible of the {name} is {value}.",
            "under the {name}, the annual deductible is {value}.",
        ),
        ("a visit to a specialist under the {name} costs {value}.",),
        "What is the annual deductible?",
        "What is the annual deductible of the {mention} plan?",
        "And what does a specialist visit cost?",
        "What is the annual deductible of the Platinum plan?",
        (
            Subject("Bronze Plan 2025", "Bronze Plan", "bronze", "$6,000", "a $75 copay"),
            Subject("Silver Plan 2025", "Silver Plan", "silver", "$3,500", "a $50 copay"),
            Subject("Gold Plan 2025", "Gold Plan", "gold", "$1,000", "a $30 copay"),
        ),
    ),
    Family(
        "visa rules",
        "en",
        ("these are the entry rules for travellers visiting {name}.",),
        ("visitors to {name} may stay without a visa for up to {value}.",),
        ("a passport must remain valid for {value} after leaving {name}.",),
        "How long can I stay without a visa?",
        "How long can I stay in {mention} without a visa?",
        "And how long must my passport be valid?",
        "How long can I stay in Argentina without a visa?",
        (
            Subject("Entry rules: Japan", "Japan", "Japan", "90 days", "the whole stay"),
            Subject("Entry rules: Brazil", "Brazil", "Brazil", "60 days", "six months"),
            Subject("Entry rules: Kenya", "Kenya", "Kenya", "30 days", "three months"),
        ),
    ),
    Family(
        "state wage rules",
        "en",
        ("this notice summarises employment law in {name}.",),
        ("the minimum wage is {value} an hour.",),
        ("overtime is paid at {value}.",),
        "What is the minimum wage?",
        "What is the minimum wage in {mention}?",
        "And how is overtime paid?",
        "What is the minimum wage in Nevada?",
        (
            Subject(
                "Employment notice — Oregon", "Oregon", "Oregon", "$14.70", "one and a half times the rate"
            ),
            Subject("Employment notice — Ohio", "Ohio", "Ohio", "$10.45", "time and a half after 40 hours"),
            Subject("Employment notice — Texas", "Texas", "Texas", "$7.25", "the federal overtime rate"),
        ),
    ),
    Family(
        "router faq and manual",
        "en",
        (
            "this document answers common questions about the {name}.",
            "this manual explains how to set up the {name}.",
        ),
        (
            "to reset the password of the {name}, {value}.",
            "the administrator password of the {name} is reset by {value}.",
        ),
        ("the {name} supports up to {value} connected devices.",),
        "How do I reset the password?",
        "How do I reset the password of the {mention}?",
        "And how many devices can connect?",
        "How do I reset the password of the Netgear N900?",
        (
            Subject(
                "Router R1 frequently asked questions",
                "Router R1",
                "R1",
                "hold the reset button for ten seconds",
                "32",
            ),
            Subject(
                "Router R2 user manual",
                "Router R2",
                "R2",
                "opening the app and choosing Forgot password",
                "64",
            ),
        ),
    ),
    Family(
        "travel policy by year",
        "en",
        ("this is the company travel policy for {name}.",),
        ("the daily meal allowance is {value}.",),
        ("hotel bookings must be made {value}.",),
        "What is the daily meal allowance?",
        "What is the daily meal allowance in the {mention} policy?",
        "And when must hotels be booked?",
        "What is the daily meal allowance in the 2019 policy?",
        (
            Subject("Travel policy 2023", "2023", "2023", "45 euros", "two weeks ahead"),
            Subject("Travel policy 2024", "2024", "2024", "50 euros", "three weeks ahead"),
            Subject("Travel policy 2025", "2025", "2025", "55 euros", "a month ahead"),
        ),
    ),
    Family(
        "phone models",
        "en",
        ("the {name} is a smartphone with a 6.1 inch screen.",),
        ("the battery of the {name} has a capacity of {value}.",),
        ("the {name} charges at up to {value}.",),
        "What is the battery capacity?",
        "What is the battery capacity of the {mention}?",
        "And how fast does it charge?",
        "What is the battery capacity of the Pixel 9?",
        (
            Subject("Nova X10 specifications", "Nova X10", "X10", "4,000 mAh", "25 watts"),
            Subject("Nova X20 specifications", "Nova X20", "X20", "4,500 mAh", "45 watts"),
            Subject("Nova X30 specifications", "Nova X30", "X30", "5,000 mAh", "65 watts"),
        ),
    ),
    Family(
        "car service",
        "en",
        ("this booklet covers maintenance of the {name}.",),
        ("the {name} needs an oil change every {value}.", "oil should be changed every {value}."),
        ("the tyre pressure of the {name} is {value}.",),
        "How often does the oil need changing?",
        "How often does the {mention} need an oil change?",
        "And what is the tyre pressure?",
        "How often does the Corolla need an oil change?",
        (
            Subject("Maintenance booklet Aria", "Aria", "Aria", "10,000 km", "2.2 bar"),
            Subject("Maintenance booklet Brio", "Brio", "Brio", "15,000 km", "2.4 bar"),
            Subject("Maintenance booklet Corsa", "Corsa", "Corsa", "20,000 km", "2.5 bar"),
        ),
    ),
    Family(
        "university programmes",
        "en",
        ("the {name} programme trains students over three years.",),
        ("tuition for the {name} programme is {value} a year.",),
        ("applications to the {name} programme close on {value}.",),
        "How much is the tuition?",
        "How much is the tuition for {mention}?",
        "And when do applications close?",
        "How much is the tuition for Medicine?",
        (
            Subject("", "Architecture", "Architecture", "9,000 pounds", "15 January"),
            Subject("Bachelor of Nursing", "Nursing", "Nursing", "7,500 pounds", "1 March"),
            Subject("Bachelor of Economics", "Economics", "Economics", "8,200 pounds", "30 June"),
        ),
    ),
    Family(
        "gym memberships",
        "en",
        ("the {name} membership gives access to every club.",),
        ("to cancel the {name} membership you must give {value} notice.",),
        ("the {name} membership costs {value} a month.",),
        "How much notice do I need to give to cancel?",
        "How much notice do I need to give to cancel the {mention} membership?",
        "And how much does it cost?",
        "How much notice do I need to give to cancel the Platinum membership?",
        (
            Subject("Flex membership terms", "Flex", "Flex", "one month", "40 dollars"),
            Subject("Premium membership terms", "Premium", "Premium", "two months", "70 dollars"),
            Subject("Student membership terms", "Student", "Student", "two weeks", "25 dollars"),
        ),
    ),
    Family(
        "airline fares",
        "en",
        ("the {name} fare is sold on every route.",),
        ("with the {name} fare you may check in {value}.", "the checked baggage allowance is {value}."),
        ("a change to a {name} ticket costs {value}.",),
        "How much checked baggage is allowed?",
        "How much checked baggage is allowed on the {mention} fare?",
        "And what does a change cost?",
        "How much checked baggage is allowed on the Premium Economy fare?",
        (
            Subject("Economy Light fare conditions", "Economy Light", "Light", "no bags", "60 euros"),
            Subject(
                "Economy Classic fare conditions",
                "Economy Classic",
                "Classic",
                "one bag of 23 kg",
                "30 euros",
            ),
            Subject(
                "Business Flex fare conditions", "Business Flex", "Business", "two bags of 32 kg", "nothing"
            ),
        ),
    ),
    Family(
        "hotel branches",
        "en",
        ("welcome to the {name} branch of Harbour Hotels.",),
        ("check-out at the {name} branch is at {value}.", "check-out is at {value}."),
        ("breakfast at the {name} branch is served until {value}.",),
        "What time is check-out?",
        "What time is check-out in {mention}?",
        "And until when is breakfast served?",
        "What time is check-out in Lisbon?",
        (
            Subject(
                "Harbour Hotels guest information for the Amsterdam branch on the canal ring by the station",
                "Amsterdam",
                "Amsterdam",
                "11 am",
                "10:30",
            ),
            Subject("Harbour Hotels — Oslo", "Oslo", "Oslo", "noon", "11:00"),
            Subject("Harbour Hotels — Dublin", "Dublin", "Dublin", "10 am", "10:00"),
        ),
    ),
    Family(
        "persian drug leaflets",
        "fa",
        ("{name} برای تسکین درد و کاهش تب مصرف می‌شود.",),
        ("حداکثر دوز روزانه {name} برای بزرگسالان {value} است.",),
        ("برای بیماران بالای ۷۰ سال مصرف {name} نباید از {value} بیشتر شود.",),
        "حداکثر دوز روزانه برای بزرگسالان چقدر است؟",
        "حداکثر دوز روزانه {mention} برای بزرگسالان چقدر است؟",
        "و برای بیماران بالای ۷۰ سال؟",
        "حداکثر دوز روزانه ناپروکسن برای بزرگسالان چقدر است؟",
        (
            Subject("بروشور ایبوپروفن", "ایبوپروفن", "ایبوپروفن", "۱۲۰۰ میلی‌گرم", "۸۰۰ میلی‌گرم در روز"),
            Subject("بروشور استامینوفن", "استامینوفن", "استامینوفن", "۴ گرم", "۳ گرم در روز"),
            Subject("", "آسپرین", "آسپرین", "۳ گرم", "۱ گرم در روز"),
        ),
    ),
    Family(
        "persian bank accounts",
        "fa",
        ("حساب {name} برای پس‌انداز خانواده‌ها طراحی شده است.",),
        ("سود سالانه حساب {name} {value} است.", "سود سالانه این حساب {value} است."),
        ("کارمزد انتقال وجه از حساب {name} {value} است.",),
        "سود سالانه حساب چقدر است؟",
        "سود سالانه حساب {mention} چقدر است؟",
        "و کارمزد انتقال وجه چقدر است؟",
        "سود سالانه حساب طلایی چقدر است؟",
        (
            Subject("شرایط حساب قرض‌الحسنه", "قرض‌الحسنه", "قرض‌الحسنه", "صفر درصد", "رایگان"),
            Subject("شرایط حساب کوتاه‌مدت", "کوتاه‌مدت", "کوتاه‌مدت", "ده درصد", "پنج هزار تومان"),
            Subject("شرایط حساب بلندمدت", "بلندمدت", "بلندمدت", "بیست درصد", "ده هزار تومان"),
        ),
    ),
    Family(
        "arabic appliances",
        "ar",
        ("صممت {name} للاستخدام اليومي في المطبخ.",),
        ("تأتي {name} مع ضمان من الشركة المصنعة لمدة {value} من تاريخ التسليم.",),
        ("لتنظيف {name} يجب {value}.",),
        "ما مدة الضمان؟",
        "ما مدة ضمان {mention}؟",
        "وكيف أنظفها؟",
        "ما مدة ضمان الثلاجة؟",
        (
            Subject("دليل الغلاية", "الغلاية", "الغلاية", "سنتين", "غلي الماء مع الخل"),
            Subject("دليل المحمصة", "المحمصة", "المحمصة", "ثلاث سنوات", "تفريغ صينية الفتات"),
            Subject("دليل الخلاط", "الخلاط", "الخلاط", "أربع سنوات", "تشغيله بالماء والصابون"),
        ),
    ),
)


def half(index: int) -> str:
    """Which half a family belongs to: the even ones are fitted on, the odd held back."""
    return "fit" if index % 2 == 0 else "held"
